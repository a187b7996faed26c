/**
 * Rules that find a secret by its shape or its label rather than by a vendor prefix: JWTs, private
 * key blocks, credentials in URLs and headers, `password=` assignments, .netrc/.pgpass lines,
 * passwords on command lines and in tools' own flags (and piped into a registry login), password
 * hashes, PuTTY private lines, a Kubernetes Secret's values, and prefix-less vendor formats (some
 * marked after the key: MaxMind, Mailchimp). Each masks the value and keeps the label.
 */
import type { Rule } from '../../rule';
import { jwtRule, pemRule } from './tokens';
import { urlCredentialsRule, authorizationRule, bearerRule, cookieHeaderRule, setCookieHeaderRule } from './urls-headers';
import { assignmentRule } from './assignments';
import { netrcRule, pgpassRule, cliPasswordRule } from './credential-files';
import { cliFlagRule } from './cli-flags';
import { jwkPrivateRule, passwordHashRule, puttyPrivateRule } from './hashes-keys';
import { xmlSecretRule } from './markup';
import { tableSecretRule } from './tables';
import { discordBotRule, telegramRule, telegramUrlRule, facebookAppTokenRule, azureClientSecretRule, azureSasRule, sentryDsnRule, sumoLogicAccessIdRule } from './vendors';
import { stdinLoginRule } from './stdin-secrets';
import { kubernetesSecretRule } from './kubernetes';
import { maxmindRule, mailchimpRule, azureDevOpsPatRule } from './suffixed';

export { PEM_MAX_CHARS } from './shared';

export const STRUCTURAL_RULES: Rule[] = [
  jwtRule,
  pemRule,
  urlCredentialsRule,
  assignmentRule,
  authorizationRule,
  bearerRule,
  cookieHeaderRule,
  setCookieHeaderRule,
  netrcRule,
  pgpassRule,
  cliPasswordRule,
  cliFlagRule,
  passwordHashRule,
  puttyPrivateRule,
  jwkPrivateRule,
  xmlSecretRule,
  tableSecretRule,
  discordBotRule,
  telegramRule,
  telegramUrlRule,
  facebookAppTokenRule,
  azureClientSecretRule,
  azureSasRule,
  sentryDsnRule,
  sumoLogicAccessIdRule,
  stdinLoginRule,
  kubernetesSecretRule,
  maxmindRule,
  mailchimpRule,
  azureDevOpsPatRule,
];

