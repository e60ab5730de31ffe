// The matrix's data stays English (e2e/scenarios/matrix.ts, the reporter's JSON, the docs); the /scenarios page
// shows it through messages looked up by id. English's messages are that data word for word, so the English page
// says what the matrix declares, and every scenario, every key-strategy row and every release-rule row has its
// message in each language.
import { createTranslator } from 'next-intl';
import { describe, expect, it } from 'vitest';
import {
  ANSWER_COLUMNS,
  ANSWER_ROWS,
  CONFIGURATIONS,
  DATABASE_FAILOVER_ROWS,
  KEY_STRATEGY_COLUMNS,
  KEY_STRATEGY_ROWS,
  REFUND_ROWS,
  RELEASE_COLUMNS,
  RELEASE_ROWS,
  SCENARIOS,
  SWITCHES,
} from '../../e2e/scenarios/matrix.ts';
import { MESSAGES } from './messages.ts';

const en = MESSAGES.en;

describe('the scenarios’ messages', () => {
  it('title every scenario of the six matrices as the matrix does', () => {
    const scenarios = [
      ...SCENARIOS,
      ...KEY_STRATEGY_ROWS.map((row) => row.scenario),
      ...RELEASE_ROWS,
      ...ANSWER_ROWS,
      ...REFUND_ROWS,
      ...DATABASE_FAILOVER_ROWS,
    ];
    expect(Object.fromEntries(scenarios.map((s) => [s.id, s.title]))).toEqual(en.scenarios.titles);
  });

  it('say why each key strategy misses as the matrix does', () => {
    expect(Object.fromEntries(KEY_STRATEGY_ROWS.map((row) => [row.scenario.id, row.why]))).toEqual(
      en.scenarios.keyMisses,
    );
  });

  it('say why each refund key fails or holds as the matrix does', () => {
    expect(Object.fromEntries(REFUND_ROWS.map((row) => [row.id, row.why]))).toEqual(en.scenarios.refundWhy);
  });

  it('say what each release rule does to each fault as the matrix does', () => {
    expect(Object.fromEntries(RELEASE_ROWS.map((row) => [row.id, row.why]))).toEqual(en.scenarios.releaseWhy);
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
    for (const { id, title } of RELEASE_COLUMNS) expect(t(`layers.releaseRules.${id}.name`)).toBe(title);
    for (const { id, title } of ANSWER_COLUMNS) expect(t(`layers.duplicateAnswers.${id}.name`)).toBe(title);
  });
});
