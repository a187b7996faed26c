'use client';
import type { Field, FormValues } from './schema-form';
import { inputType } from './schema-form';

/** The inputs of a parameters form; errors sit under their field and are announced. */
export default function SchemaForm({
  idPrefix,
  fields,
  values,
  errors,
  disabled,
  onChange,
}: {
  idPrefix: string;
  fields: Field[];
  values: FormValues;
  errors: Record<string, string>;
  disabled: boolean;
  onChange(name: string, value: string | boolean): void;
}) {
  if (fields.length === 0) return <p className="muted small">This agent takes no parameters.</p>;
  return (
    <div className="schema-form">
      {fields.map((f) => {
        const id = `${idPrefix}-${f.name}`;
        const err = errors[f.name];
        const help = [hint(f), f.description].filter(Boolean).join(' ');
        const describedBy = [help ? `${id}-help` : '', err ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
        const common = {
          id,
          name: f.name,
          disabled,
          'aria-invalid': err ? true : undefined,
          'aria-required': f.required || undefined,
          'aria-describedby': describedBy,
        } as const;
        return (
          <div key={f.name} className={`schema-field${err ? ' has-error' : ''}${f.kind === 'boolean' ? ' is-check' : ''}`} data-field={f.name}>
            {f.kind === 'boolean' ? (
              <label htmlFor={id} className="check">
                <input {...common} type="checkbox" checked={values[f.name] === true} onChange={(e) => onChange(f.name, e.target.checked)} /> {f.label}
              </label>
            ) : (
              <div className="field-label">
                <label htmlFor={id}>{f.label}</label>
                {f.required && (
                  <span className="required-mark" title="required">
                    *
                  </span>
                )}
              </div>
            )}
            {f.kind === 'enum' ? (
              <select {...common} required={f.required} value={String(values[f.name] ?? '')} onChange={(e) => onChange(f.name, e.target.value)}>
                <option value="">{f.required ? '(choose)' : '(not set)'}</option>
                {f.enumValues.map((v, i) => (
                  <option key={i} value={String(i)}>
                    {String(v)}
                  </option>
                ))}
              </select>
            ) : f.kind === 'json' ? (
              <textarea {...common} rows={3} value={String(values[f.name] ?? '')} onChange={(e) => onChange(f.name, e.target.value)} placeholder="JSON" />
            ) : f.kind !== 'boolean' ? (
              <input
                {...common}
                type={inputType(f)}
                inputMode={f.kind === 'integer' ? 'numeric' : f.kind === 'number' ? 'decimal' : undefined}
                value={String(values[f.name] ?? '')}
                onChange={(e) => onChange(f.name, e.target.value)}
                placeholder={f.kind === 'list' ? 'a, b, c' : undefined}
              />
            ) : null}
            {help && (
              <p id={`${id}-help`} className="muted small field-help">
                {help}
              </p>
            )}
            {err && (
              <p id={`${id}-error`} className="error-line field-error" role="alert">
                {f.label} {err}
              </p>
            )}
          </div>
        );
      })}
    </div>
  );
}

function hint(f: Field): string {
  switch (f.kind) {
    case 'integer':
      return 'A whole number.';
    case 'number':
      return 'A number.';
    case 'list':
      return `A comma-separated list of ${f.itemKind === 'text' ? 'values' : `${f.itemKind}s`}.`;
    case 'json':
      return 'JSON.';
    case 'text':
      return f.format === 'uri' || f.format === 'url' ? 'A URL.' : f.format ? `Format: ${f.format}.` : '';
    default:
      return '';
  }
}
