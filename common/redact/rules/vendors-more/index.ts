/**
 * More vendor tokens with a documented literal prefix (`vendors.ts` holds the first set): AI
 * APIs, developer tools and CI, clouds and SaaS APIs. Formats are the vendors' own, cross-checked
 * against gitleaks' rule set where the vendor page does not spell the length. As in `vendors.ts`,
 * the prefix is kept and the body masked; `shape` pins a body whose parts have fixed lengths, so a
 * longer run of the same characters (a digest, an identifier) is not taken for the token.
 */
import type { Rule } from '../../rule';
import { AI_RULES } from './ai';
import { CLOUD_RULES } from './cloud';
import { DEV_TOOL_RULES } from './dev-tools';
import { SAAS_RULES } from './saas';
import { SERVICE_RULES } from './services';
import { WEB_RULES } from './web';

/** Appended after `VENDOR_RULES`, so where two rules read the same text the older one is asked first. */
export const MORE_VENDOR_RULES: Rule[] = [...AI_RULES, ...DEV_TOOL_RULES, ...CLOUD_RULES, ...SAAS_RULES, ...WEB_RULES, ...SERVICE_RULES];
