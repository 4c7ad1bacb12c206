// Ends every run that includes the e2e files with what they did: which ran, or "skipped: ..." and why, so a green
// `npm test` never hides that the package or the browser was not tested.
import type { Reporter, TestModule } from 'vitest/node';
import { browserGate, distGate, e2eMode } from './gate.js';

export default class E2ESummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const moduleOf = (file: string) =>
      testModules.find((m) => m.project.name !== 'scalar' && m.moduleId.endsWith(`/test/e2e/${file}`));
    const mode = e2eMode();
    const lines: string[] = [];
    for (const [file, gate, what] of [
      ['dist.test.ts', distGate(mode), 'package (dist) tests'],
      ['browser.test.ts', browserGate(mode), 'browser tests (headless Chromium)'],
    ] as const) {
      const module = moduleOf(file);
      if (!module) continue;
      if (!gate.run) lines.push(`skipped: ${gate.skipped}`);
      else lines.push(`${module.state() === 'passed' ? 'ran' : 'FAILED'}: ${what}`);
    }
    const why = {
      auto: 'SIMHASH_E2E unset: what this machine can run',
      required: 'SIMHASH_E2E=1',
      off: 'SIMHASH_E2E=0',
    };
    if (lines.length > 0) console.log(`\n End-to-end tests (${why[mode]}):\n  ${lines.join('\n  ')}\n`);
  }
}
