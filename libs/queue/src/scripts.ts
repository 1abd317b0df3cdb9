import { readFileSync } from 'node:fs';
import type { RedisClient } from './connection.js';

/** The Lua scripts beside this module; the number in a file name is its count of Redis keys. */
const scriptFiles = {
  addKeys: 'addKeys-5.lua',
  finishAndTake: 'finishAndTake-9.lua',
  extendLeases: 'extendLeases-2.lua',
  checkEpoch: 'checkEpoch-2.lua',
} as const;

/** `-- @include name.lua` pulls in a shared piece from includes/, so scripts share no copies. */
const includeLine = /^-- @include (\S+)$/gm;

function readScript(file: string): string {
  const lua = readFileSync(new URL(`./${file}`, import.meta.url), 'utf8');
  return lua.replace(includeLine, (_, name: string) =>
    readFileSync(new URL(`./includes/${name}`, import.meta.url), 'utf8'),
  );
}

export type ScriptName = keyof typeof scriptFiles;

type ScriptArg = string | number;
export type ScriptCommands = Record<ScriptName, (...args: ScriptArg[]) => Promise<unknown>>;

let sources: Map<ScriptName, { lua: string; numberOfKeys: number }> | undefined;

function loadSources(): Map<ScriptName, { lua: string; numberOfKeys: number }> {
  sources ??= new Map(
    Object.entries(scriptFiles).map(([name, file]) => [
      name as ScriptName,
      {
        lua: readScript(file),
        numberOfKeys: Number(/-(\d+)\.lua$/.exec(file)?.[1]),
      },
    ]),
  );
  return sources;
}

/**
 * Registers the scripts on a client. ioredis sends EVALSHA and falls back to EVAL when Redis does
 * not know the script (after a restart), and routes by the first key on a Cluster.
 */
export function defineScripts(client: RedisClient): ScriptCommands {
  const commands: Partial<ScriptCommands> = {};
  for (const [name, source] of loadSources()) {
    const command = `wq_${name}`;
    client.defineCommand(command, source);
    const bound = (client as unknown as Record<string, (...a: ScriptArg[]) => Promise<unknown>>)[
      command
    ];
    if (!bound) throw new Error(`script ${name} was not registered`);
    commands[name] = bound.bind(client);
  }
  return commands as ScriptCommands;
}
