import type { ProviderInfo } from '../../protocol';

/** Words for one provider on a runner: version, a flag when it is outside its adapter's range, shared sign-in. */
export function providerLabel(p: ProviderInfo): { text: string; warning: string | null } {
  const text = `${p.id}${p.version ? ` ${p.version}` : ''}${p.shares_auth_file ? ' · shares the runner user’s sign-in' : ''}`;
  if (p.version_supported === false) return { text, warning: `untested version: the adapter was written for ${p.version_range ?? 'another version'}` };
  if (p.version_supported === null && p.version_range) return { text, warning: `version unknown: the adapter was written for ${p.version_range}` };
  return { text, warning: null };
}

/** The providers a runner offers, each with its version; a CLI outside its adapter's range is flagged. */
export function RunnerProviders({ providers, info }: { providers: string[]; info: ProviderInfo[] }) {
  if (providers.length === 0) return <>none</>;
  const byId = new Map(info.map((p) => [p.id, p]));
  return (
    <ul className="inline-list" aria-label="providers">
      {providers.map((id) => {
        const p = byId.get(id as ProviderInfo['id']);
        const { text, warning } = p ? providerLabel(p) : { text: id, warning: null };
        return (
          <li key={id}>
            {text}
            {warning && (
              <strong className="warning-text" role="status">
                {' '}
                ⚠ {warning}
              </strong>
            )}
          </li>
        );
      })}
    </ul>
  );
}
