export * from './result';
export * from './world';
export * from './events';
export * from './runner';
export * from './ui';
export * from './api';
export * from './approvals';
export * from './redact';
