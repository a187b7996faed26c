import { describe, expect, it } from 'vitest';
import { buildCliArgs, CommandSyntaxError, splitCommand } from './argv';

describe('splitCommand (shell-words, no shell)', () => {
  it('splits like a shell would, keeping quoted words whole', () => {
    expect(splitCommand('python -m crawler.main')).toEqual(['python', '-m', 'crawler.main']);
    expect(splitCommand(`python3 -c "import sys, json; print(json.dumps(json.loads(sys.stdin.read())))"`)).toEqual([
      'python3',
      '-c',
      'import sys, json; print(json.dumps(json.loads(sys.stdin.read())))',
    ]);
    expect(splitCommand(`node 'my script.mjs' --x="a b" c\\ d`)).toEqual(['node', 'my script.mjs', '--x=a b', 'c d']);
  });

  it('keeps $VARS literal and refuses what only a shell could do', () => {
    expect(splitCommand('echo $HOME "${USER}"')).toEqual(['echo', '$HOME', '$USER']);
    for (const bad of ['ls | wc -l', 'a; rm -rf /', 'a && b', 'cat > out.txt', 'ls *.txt', 'run # note', '   ']) {
      expect(() => splitCommand(bad), bad).toThrow(CommandSyntaxError);
    }
  });
});

describe('buildCliArgs (the spec’s build_cli_args)', () => {
  it('matches the spec example', () => {
    expect(buildCliArgs('python -m crawler.main', { url: 'https://x.com', depth: 2 })).toEqual([
      'python',
      '-m',
      'crawler.main',
      '--url',
      'https://x.com',
      '--depth',
      '2',
    ]);
  });

  it('turns every parameter type into argv, in the order given', () => {
    expect(
      buildCliArgs('tool', {
        name: 'plain',
        count: 3,
        ratio: 0.25,
        negative: -7,
        verbose: true,
        quiet: false,
        tags: ['a', 'b c', 3, true],
        empty: [],
        nested: { a: 1 },
        missing: null,
      }),
    ).toEqual([
      'tool',
      '--name',
      'plain',
      '--count',
      '3',
      '--ratio',
      '0.25',
      '--negative',
      '-7',
      '--verbose',
      '--tags',
      'a,b c,3,true',
      '--empty',
      '',
      '--nested',
      '{"a":1}',
    ]);
  });

  it('keeps quotes, spaces and shell characters inside one argv element (no injection)', () => {
    const nasty = `it's "quoted"; rm -rf / && echo $(whoami) \`id\` > /tmp/x | cat`;
    const argv = buildCliArgs('echo', { message: nasty, path: 'a file with spaces.txt', empty: '' });
    expect(argv).toEqual(['echo', '--message', nasty, '--path', 'a file with spaces.txt', '--empty', '']);
  });
});
