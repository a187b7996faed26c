import type { Classification } from '../policy/classify';
import { measureDeploy, measureGit, measureInstall, type Measured } from './measure';

/** The approval context's measurement of one classified action (argv: the simple command that asked). */
export async function measureAction(c: Classification, argv: string[], cwd: string, current: string | null): Promise<Measured> {
  if (c.category === 'merge') return measureGit(cwd, argv, current, c.target_branch);
  if (c.category === 'deps_add') return measureInstall(cwd, installSpecs(argv));
  if (c.category === 'deploy') return measureDeploy(argv);
  return {};
}

/** The package words of an install command (the program, the verb and options dropped). */
export function installSpecs(argv: string[]): string[] {
  const args = argv.slice(argv[1] === '-m' ? 3 : 1);
  const verb = args.findIndex((a) => !a.startsWith('-'));
  return verb < 0 ? [] : args.slice(verb + 1).filter((a) => !a.startsWith('-'));
}
