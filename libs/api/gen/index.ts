export { renderApiDoc } from './docs.js';
export { renderTypes } from './types.js';
