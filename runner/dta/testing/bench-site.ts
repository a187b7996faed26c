/**
 * bench:dta's generated site (HTML, Markdown and CSS pages, each with links to the old host), also
 * what tests hold the fast paths to on the bench's own shape. `round` goes into every file's text,
 * so no bench round finds its texts parsed by an earlier one (this process's parse cache is by
 * content: a runner does not see the same 5,000 texts again, except a dry-run's apply, which the run
 * itself reuses).
 */
export function benchSite(n: number, round: number): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < n; i++) {
    const dir = `site/s${i % 50}`;
    const k = i % 3;
    if (k === 0) files[`${dir}/p${i}.html`] = `<!doctype html><html><head><link rel="stylesheet" href="https://old.example.com/s${i}.css"></head><body>\n<p>Round ${round}.</p>\n${'<p>Lorem ipsum dolor sit amet.</p>\n'.repeat(20)}<a href="http://old.example.com/p${i + 1}">next</a> <a href="https://elsewhere.org/">x</a>\n<img src="https://old.example.com/i${i}.png" srcset="https://old.example.com/i${i}.png 1x, https://old.example.com/i${i}@2x.png 2x">\n</body></html>\n`;
    else if (k === 1) files[`${dir}/p${i}.md`] = `# Page ${i} of round ${round}\n\n${'Some prose for the page.\n'.repeat(20)}\nSee [next](http://old.example.com/p${i + 1}) and ![img](https://old.example.com/i${i}.png).\n\n[ref]: https://old.example.com/ref${i}\n`;
    else files[`${dir}/s${i}.css`] = `/* round ${round} */\n${'.a { color: red; }\n'.repeat(20)}.hero { background: url("https://old.example.com/h${i}.jpg"); }\n`;
  }
  return files;
}
