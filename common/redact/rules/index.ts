import type { Rule } from '../rule';
import { STRUCTURAL_RULES } from './structural';
import { VENDOR_RULES } from './vendors';

/** Every built-in rule: vendor token formats, then shapes and labels. */
export const DEFAULT_RULES: readonly Rule[] = [...VENDOR_RULES, ...STRUCTURAL_RULES];

export { STRUCTURAL_RULES, VENDOR_RULES };
