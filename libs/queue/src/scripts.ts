import { readFileSync } from 'node:fs';
import type { RedisClient } from './connection.js';

type Command = (...keysThenArgs: (string | number)[]) => Promise<unknown>;

/**
 * A Lua script that sits beside the code as `commands/<verb>-<keys>.lua` (BullMQ's naming). It is
 * registered on each client it is used with, so `client[name]` and `client.pipeline()[name]`
 * exist; ioredis sends EVALSHA and falls back to EVAL on NOSCRIPT, so a restarted Redis needs no
 * reload.
 */
export class LuaScript {
  private readonly lua: string;
  private readonly registered = new WeakSet<object>();

  constructor(
    readonly name: string,
    readonly numberOfKeys: number,
    file: URL,
  ) {
    this.lua = readFileSync(file, 'utf8');
  }

  /** The client, with this script registered on it. */
  on<C extends RedisClient>(client: C): C {
    if (!this.registered.has(client)) {
      client.defineCommand(this.name, { numberOfKeys: this.numberOfKeys, lua: this.lua });
      this.registered.add(client);
    }
    return client;
  }

  /** Runs the script: its keys first, then its arguments. */
  run(client: RedisClient, ...keysThenArgs: (string | number)[]): Promise<unknown> {
    return this.commandOf(this.on(client)).apply(client, keysThenArgs);
  }

  /** The script's command on a client or pipeline it was registered on. */
  commandOf(target: object): Command {
    return (target as Record<string, Command>)[this.name] as Command;
  }
}
