/**
 * A form from a blueprint's parameters_schema (JSON Schema, type "object"): one field per
 * property, typed inputs for what the command line can carry (text, numbers, booleans, enums,
 * lists), JSON for anything nested. Pure, so it is tested without a browser.
 */

export type FieldKind = 'text' | 'number' | 'integer' | 'boolean' | 'enum' | 'list' | 'json';
type ItemKind = 'text' | 'number' | 'integer' | 'boolean';

export interface Field {
  name: string;
  label: string;
  description: string;
  required: boolean;
  kind: FieldKind;
  /** JSON Schema "format" of a text field (uri, email, date…), for the input type and hints. */
  format: string | null;
  enumValues: unknown[];
  itemKind: ItemKind;
  default: unknown;
}

/** What the inputs hold: text for everything but checkboxes. */
export type FormValues = Record<string, string | boolean>;

const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

function typeOf(s: Record<string, unknown>): string | null {
  const t = s.type;
  if (typeof t === 'string') return t;
  // ["string", "null"]: the first that is not null.
  if (Array.isArray(t)) return (t.find((x) => x !== 'null') as string | undefined) ?? null;
  return null;
}

function kindOf(s: Record<string, unknown>): { kind: FieldKind; itemKind: ItemKind } {
  if (Array.isArray(s.enum) && s.enum.every((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v))) return { kind: 'enum', itemKind: 'text' };
  const t = typeOf(s);
  if (t === 'string') return { kind: 'text', itemKind: 'text' };
  if (t === 'integer') return { kind: 'integer', itemKind: 'text' };
  if (t === 'number') return { kind: 'number', itemKind: 'text' };
  if (t === 'boolean') return { kind: 'boolean', itemKind: 'text' };
  if (t === 'array') {
    const it = typeOf(obj(s.items));
    if (it === 'string' || it === null) return { kind: 'list', itemKind: 'text' };
    if (it === 'integer' || it === 'number' || it === 'boolean') return { kind: 'list', itemKind: it };
  }
  return { kind: 'json', itemKind: 'text' };
}

export function fieldsOf(schema: Record<string, unknown>): Field[] {
  const props = obj(schema.properties);
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((x): x is string => typeof x === 'string') : []);
  return Object.entries(props).map(([name, raw]) => {
    const s = obj(raw);
    const { kind, itemKind } = kindOf(s);
    return {
      name,
      label: typeof s.title === 'string' && s.title ? s.title : name,
      description: typeof s.description === 'string' ? s.description : '',
      required: required.has(name),
      kind,
      format: typeof s.format === 'string' ? s.format : null,
      enumValues: Array.isArray(s.enum) ? s.enum : [],
      itemKind,
      default: s.default,
    };
  });
}

/** The form as it opens: each field at its schema default (or empty). */
export function initialValues(fields: Field[]): FormValues {
  const v: FormValues = {};
  for (const f of fields) {
    const d = f.default;
    if (f.kind === 'boolean') v[f.name] = d === true;
    else if (d === undefined) v[f.name] = '';
    else if (f.kind === 'enum') v[f.name] = String(Math.max(0, f.enumValues.findIndex((e) => e === d)));
    else if (f.kind === 'list') v[f.name] = Array.isArray(d) ? d.map(String).join(', ') : '';
    else if (f.kind === 'json') v[f.name] = JSON.stringify(d);
    else v[f.name] = String(d);
  }
  return v;
}

function item(kind: ItemKind, text: string): { ok: true; value: unknown } | { ok: false } {
  if (kind === 'text') return { ok: true, value: text };
  if (kind === 'boolean') return text === 'true' || text === 'false' ? { ok: true, value: text === 'true' } : { ok: false };
  const n = Number(text);
  return Number.isFinite(n) ? { ok: true, value: n } : { ok: false };
}

/**
 * The parameters object from the inputs. Empty optional inputs are left out (the schema's default
 * or the program's own applies); what cannot even be converted is an error by field name. The
 * schema's own rules (required, ranges, formats) are the validator's job, not this one's.
 */
export function toParameters(fields: Field[], values: FormValues): { parameters: Record<string, unknown>; errors: Record<string, string> } {
  const parameters: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const f of fields) {
    const raw = values[f.name];
    if (f.kind === 'boolean') {
      parameters[f.name] = raw === true;
      continue;
    }
    const text = typeof raw === 'string' ? raw : '';
    if (f.kind === 'enum') {
      if (text !== '') parameters[f.name] = f.enumValues[Number(text)];
      continue;
    }
    // Empty means "not given"; whitespace is meaningful only in text.
    if (text === '' || (text.trim() === '' && f.kind !== 'text')) continue;
    switch (f.kind) {
      case 'text':
        parameters[f.name] = text;
        break;
      case 'number':
      case 'integer': {
        const n = Number(text.trim());
        if (!Number.isFinite(n)) errors[f.name] = f.kind === 'integer' ? 'must be a whole number' : 'must be a number';
        else parameters[f.name] = n;
        break;
      }
      case 'list': {
        const out: unknown[] = [];
        for (const part of text.split(',').map((x) => x.trim()).filter((x) => x !== '')) {
          const r = item(f.itemKind, part);
          if (!r.ok) {
            errors[f.name] = `"${part}" is not ${f.itemKind === 'boolean' ? 'true or false' : 'a number'}`;
            break;
          }
          out.push(r.value);
        }
        if (!errors[f.name]) parameters[f.name] = out;
        break;
      }
      case 'json':
        try {
          parameters[f.name] = JSON.parse(text) as unknown;
        } catch {
          errors[f.name] = 'is not valid JSON';
        }
        break;
    }
  }
  return { parameters, errors };
}

/** The input type for a text field's format. */
export function inputType(f: Field): string {
  if (f.kind === 'number' || f.kind === 'integer') return 'text';
  switch (f.format) {
    case 'uri':
    case 'url':
      return 'url';
    case 'email':
      return 'email';
    default:
      return 'text';
  }
}
