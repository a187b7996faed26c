'use client';
import { useCallback, useMemo, useState } from 'react';
import { fieldsOf, initialValues, toParameters, type FormValues } from './schema-form';
import { checkParameters } from './validate';

/**
 * The state of a form drawn from a JSON Schema (blueprint agents, DTAs): its fields, what was
 * typed, the messages by field and the form's own line. `check(fixMessage)` converts and validates
 * what was typed, puts each message on its field and returns the parameters, or null when
 * something must be fixed first (then the form's line says `fixMessage`, or the schema's own error).
 */
export function useSchemaForm(schema: Record<string, unknown>) {
  const fields = useMemo(() => fieldsOf(schema), [schema]);
  const [values, setValues] = useState<FormValues>(() => initialValues(fields));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<string | null>(null);

  /** A field changed: its old message no longer applies. */
  const onChange = useCallback((name: string, value: FormValues[string]) => {
    setValues((v) => ({ ...v, [name]: value }));
    setErrors(({ [name]: _gone, ...rest }) => rest);
  }, []);

  function check(fixMessage: string): Record<string, unknown> | null {
    const { parameters, errors: conversion } = toParameters(fields, values);
    const all = { ...checkParameters(schema, parameters), ...conversion };
    setErrors(all);
    if (Object.keys(all).length > 0) {
      setFormError(all[''] ?? fixMessage);
      return null;
    }
    setFormError(null);
    return parameters;
  }

  return { fields, values, errors, setErrors, formError, setFormError, onChange, check };
}
