export * from './specs.js';
export * from './schema.js';
export * from './request-validator.js';
export * from './typing.js';
export * from './json-value.js';
