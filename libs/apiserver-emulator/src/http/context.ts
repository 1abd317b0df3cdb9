import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EmulatorCore } from '../core.js';
import type { RequestInfo, UserInfo } from '../types.js';

/** One API request on its way through the resource handlers. */
export interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  info: RequestInfo;
  query: URLSearchParams;
  user: UserInfo;
  body: Buffer;
  core: EmulatorCore;
}
