/**
 * The params JSON Schema of each DTA (plain data, so the workshop form, the control plane and the
 * runner's adapters read the same one). ajv checks params against these on the runner.
 */
export const DTA_PARAMS_SCHEMAS = {
  link_updater: {
    type: 'object',
    additionalProperties: false,
    required: ['from_hosts', 'to_host'],
    properties: {
      from_hosts: { type: 'array', minItems: 1, maxItems: 50, items: { type: 'string', pattern: '^https?://[^/\\s]+/?$' }, description: 'Origins to move away from' },
      to_host: { type: 'string', pattern: '^https?://[^/\\s]+$', description: 'The origin links should point to' },
      sample_http: {
        type: 'object',
        additionalProperties: false,
        required: ['size'],
        properties: { size: { type: 'integer', minimum: 1, maximum: 1000 }, timeout_ms: { type: 'integer', minimum: 100, maximum: 60_000, default: 5000 } },
      },
    },
  },
  json_schema_migrator: {
    type: 'object',
    additionalProperties: false,
    required: ['schema'],
    properties: {
      schema: { type: 'object', description: 'The JSON Schema every file must match' },
      renames: { type: 'object', additionalProperties: { type: 'string', minLength: 1 }, description: 'old key → new key' },
      fill_defaults: { type: 'boolean', default: true },
      coerce_types: { type: 'boolean', default: true },
    },
  },
  rename_refactor: {
    type: 'object',
    additionalProperties: false,
    required: ['from', 'to'],
    properties: {
      from: { type: 'string', pattern: '^[A-Za-z_$][A-Za-z0-9_$]*$', description: 'The symbol to rename' },
      to: { type: 'string', pattern: '^[A-Za-z_$][A-Za-z0-9_$]*$', description: 'Its new name' },
      declared_in: { type: 'string', minLength: 1, description: 'The file declaring it (when the name is declared more than once)' },
    },
  },
  intra_repo_link_fixer: {
    type: 'object',
    additionalProperties: false,
    properties: {
      moves: { type: 'object', additionalProperties: { type: 'string', minLength: 1 }, description: 'old path → new path' },
      since: { type: 'string', minLength: 1, maxLength: 200, pattern: '^[^-\\s][^\\s]*$', description: 'A git revision: renames since it are the moves' },
    },
  },
} as const satisfies Record<string, Record<string, unknown>>;

/** What each DTA does, in one line (the workshop's list, `av-dta list`). */
export const DTA_SUMMARIES = {
  link_updater: 'Points links (HTML href/src/srcset/action/meta refresh, Markdown links and definitions, CSS url()) from old hosts to a new one',
  json_schema_migrator: 'Makes JSON files match a schema: renamed keys, missing defaults, type coercions; reports the rest',
  rename_refactor: 'Renames a TypeScript/JavaScript symbol and its references through the AST (ts-morph)',
  intra_repo_link_fixer: 'Fixes relative Markdown links and #anchors to files that moved',
} as const;
