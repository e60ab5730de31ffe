// The matrix's data stays English (e2e/scenarios/matrix.ts, the reporter's JSON, the docs); the /scenarios page
// shows it through messages looked up by id. English's messages are that data word for word, so the English page
// says what the matrix declares, and every scenario and every key-strategy row has its message in each language.
import { createTranslator } from 'next-intl';
import { describe, expect, it } from 'vitest';
import {
  CONFIGURATIONS,
  KEY_STRATEGY_COLUMNS,
  KEY_STRATEGY_ROWS,
  SCENARIOS,
  SWITCHES,
} from '../../e2e/scenarios/matrix.ts';
import { MESSAGES } from './messages.ts';

const en = MESSAGES.en;

describe('the scenarios’ messages', () => {
  it('title every scenario of both matrices as the matrix does', () => {
    const scenarios = [...SCENARIOS, ...KEY_STRATEGY_ROWS.map((row) => row.scenario)];
    expect(Object.fromEntries(scenarios.map((s) => [s.id, s.title]))).toEqual(en.scenarios.titles);
  });

  it('say why each key strategy misses as the matrix does', () => {
    expect(Object.fromEntries(KEY_STRATEGY_ROWS.map((row) => [row.scenario.id, row.why]))).toEqual(
      en.scenarios.keyMisses,
    );
  });

  it('name the configurations and the key strategies as the matrix does', () => {
    const t = createTranslator({ locale: 'en', messages: en });
    for (const { title, layers } of CONFIGURATIONS) {
      const on = SWITCHES.filter((layer) => layers[layer]);
      const [only] = on;
      const named =
        on.length === SWITCHES.length
          ? t('scenarios.configurations.allOn')
          : on.length === 0
            ? t('scenarios.configurations.allOff')
            : only && t('scenarios.configurations.only', { step: t(`layers.steps.${only}`) });
      expect(named).toBe(title);
    }
    for (const { id, title } of KEY_STRATEGY_COLUMNS) expect(t(`layers.keyStrategies.${id}.name`)).toBe(title);
  });
});
