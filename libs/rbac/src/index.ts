export * from './permissions.js';
export * from './render.js';
