import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseOptions, type IForbiddenRuleType, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The layers of .dependency-cruiser.cjs, checked in the suite as `npm run lint:deps` checks them:
 * src/chain/ never imports src/config/, src/machines/ or src/http/; nothing but the wiring imports
 * src/http/; inside src/chain/client/ every layer imports only the layers below it
 * (docs/architecture.md, "The chain client's layers"). And the rules can fail: a tree that breaks
 * each one is cruised too, and each rule must report it.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');
const LAYERS = (createRequire(import.meta.url)(CONFIG) as { clientLayers: Array<{ name: string }> }).clientLayers;

async function violations(baseDir: string): Promise<IViolation[]> {
  const options: ICruiseOptions = { ...(await extractDepcruiseOptions(CONFIG)), baseDir };
  const { output } = await cruise(['src'], options, { extensions: ['.ts', '.js'] });
  if (typeof output === 'string') throw new Error('dependency-cruiser answered with a report, not a result');
  return output.summary.violations;
}

const shown = (list: readonly IViolation[]) => list.map(({ rule, from, to }) => `${rule.name}: ${from} -> ${to}`);

describe('the layers of src/ (.dependency-cruiser.cjs)', () => {
  it('src/ breaks none of them', { timeout: 60_000 }, async () => {
    expect(shown(await violations(ROOT))).toEqual([]);
  });

  it('has a rule for chain -> config, chain -> machines or http, nothing -> http, and one per layer of the chain client', async () => {
    const { ruleSet } = await extractDepcruiseOptions(CONFIG);
    const names = (ruleSet?.forbidden ?? []).map(({ name }: IForbiddenRuleType) => name);
    expect(LAYERS.map(({ name }) => name)).toEqual([
      'read',
      'budget',
      'nonce',
      'submit/build',
      'submit/send',
      'submit/watch',
      'submit/settle',
      'submit',
    ]);
    expect(names).toEqual([
      'chain-not-to-config',
      'chain-not-to-machines-or-http',
      'nothing-imports-http',
      ...LAYERS.map(({ name }) => `chain-client-layer-${name.replace('/', '-')}`),
    ]);
  });

  describe('can fail: a tree that breaks every rule', () => {
    let bad: string;
    const files: Record<string, string> = {
      'src/config/config.ts': 'export const SETTING = 1;\n',
      'src/http/app.ts': 'export const APP = 1;\n',
      'src/machines/crank.ts': "import { APP } from '../http/app.js';\nexport const CRANK = APP;\n",
      'src/chain/client/create-chain-client.ts': 'export const WIRING = 1;\n',
      'src/chain/client/submit/votes.ts': 'export const VOTES = 1;\n',
      'src/chain/client/submit/settle/lifetime.ts': "import { VOTES } from '../votes.js';\nexport const LIFETIME = VOTES;\n",
      'src/chain/client/submit/watch/watch.ts': "import { LIFETIME } from '../settle/lifetime.js';\nexport const WATCH = LIFETIME;\n",
      'src/chain/client/submit/send/send.ts': "import { WATCH } from '../watch/watch.js';\nexport const SEND = WATCH;\n",
      'src/chain/client/submit/build/build.ts': "import { SEND } from '../send/send.js';\nexport const BUILD = SEND;\n",
      'src/chain/client/nonce/pool.ts': "import { BUILD } from '../submit/build/build.js';\nexport const POOL = BUILD;\n",
      'src/chain/client/budget/fee.ts': "import { POOL } from '../nonce/pool.js';\nexport const FEE = POOL;\n",
      'src/chain/client/read/reader.ts':
        "import { FEE } from '../budget/fee.js';\nimport { SETTING } from '../../../config/config.js';\nimport { CRANK } from '../../../machines/crank.js';\nexport const READ = FEE + SETTING + CRANK;\n",
      'src/chain/client/submit/actions.ts': "import { WIRING } from '../create-chain-client.js';\nexport const ACTIONS = WIRING;\n",
    };

    beforeAll(() => {
      bad = mkdtempSync(join(tmpdir(), 'layers-'));
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(bad, path)), { recursive: true });
        writeFileSync(join(bad, path), text);
      }
    });
    afterAll(() => rmSync(bad, { recursive: true, force: true }));

    it('each rule reports its break', { timeout: 60_000 }, async () => {
      expect(shown(await violations(bad)).sort()).toEqual(
        [
          'chain-not-to-config: src/chain/client/read/reader.ts -> src/config/config.ts',
          'chain-not-to-machines-or-http: src/chain/client/read/reader.ts -> src/machines/crank.ts',
          'nothing-imports-http: src/machines/crank.ts -> src/http/app.ts',
          'chain-client-layer-read: src/chain/client/read/reader.ts -> src/chain/client/budget/fee.ts',
          'chain-client-layer-budget: src/chain/client/budget/fee.ts -> src/chain/client/nonce/pool.ts',
          'chain-client-layer-nonce: src/chain/client/nonce/pool.ts -> src/chain/client/submit/build/build.ts',
          'chain-client-layer-submit-build: src/chain/client/submit/build/build.ts -> src/chain/client/submit/send/send.ts',
          'chain-client-layer-submit-send: src/chain/client/submit/send/send.ts -> src/chain/client/submit/watch/watch.ts',
          'chain-client-layer-submit-watch: src/chain/client/submit/watch/watch.ts -> src/chain/client/submit/settle/lifetime.ts',
          'chain-client-layer-submit-settle: src/chain/client/submit/settle/lifetime.ts -> src/chain/client/submit/votes.ts',
          'chain-client-layer-submit: src/chain/client/submit/actions.ts -> src/chain/client/create-chain-client.ts',
        ].sort(),
      );
    });
  });
});
