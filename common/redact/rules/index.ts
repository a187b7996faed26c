import type { Rule } from '../rule';
import { STRUCTURAL_RULES } from './structural';
import { VENDOR_RULES } from './vendors';
import { MORE_VENDOR_RULES } from './vendors-more';

/** Every built-in rule: vendor token formats, then shapes and labels. */
export const DEFAULT_RULES: readonly Rule[] = [...VENDOR_RULES, ...MORE_VENDOR_RULES, ...STRUCTURAL_RULES];

export { MORE_VENDOR_RULES, STRUCTURAL_RULES, VENDOR_RULES };
