// Every message of the demo, per language, in one file per area (messages/<locale>/<area>.json): the area is
// the namespace a component asks for (`useTranslations('checkout')`). English is the reference: its keys are
// the ones every language must have (lib/i18n/messages.test.ts fails on one missing either way).
import enCheckout from '../../messages/en/checkout.json' with { type: 'json' };
import enCommon from '../../messages/en/common.json' with { type: 'json' };
import enGlossary from '../../messages/en/glossary.json' with { type: 'json' };
import enHome from '../../messages/en/home.json' with { type: 'json' };
import enLab from '../../messages/en/lab.json' with { type: 'json' };
import enLayers from '../../messages/en/layers.json' with { type: 'json' };
import enProblems from '../../messages/en/problems.json' with { type: 'json' };
import enRefunds from '../../messages/en/refunds.json' with { type: 'json' };
import enScenarios from '../../messages/en/scenarios.json' with { type: 'json' };
import enTimeline from '../../messages/en/timeline.json' with { type: 'json' };
import enWorkshop from '../../messages/en/workshop.json' with { type: 'json' };
import zhCheckout from '../../messages/zh-CN/checkout.json' with { type: 'json' };
import zhCommon from '../../messages/zh-CN/common.json' with { type: 'json' };
import zhGlossary from '../../messages/zh-CN/glossary.json' with { type: 'json' };
import zhHome from '../../messages/zh-CN/home.json' with { type: 'json' };
import zhLab from '../../messages/zh-CN/lab.json' with { type: 'json' };
import zhLayers from '../../messages/zh-CN/layers.json' with { type: 'json' };
import zhProblems from '../../messages/zh-CN/problems.json' with { type: 'json' };
import zhRefunds from '../../messages/zh-CN/refunds.json' with { type: 'json' };
import zhScenarios from '../../messages/zh-CN/scenarios.json' with { type: 'json' };
import zhTimeline from '../../messages/zh-CN/timeline.json' with { type: 'json' };
import zhWorkshop from '../../messages/zh-CN/workshop.json' with { type: 'json' };
import type { Locale } from './locales.ts';

const en = {
  common: enCommon,
  home: enHome,
  glossary: enGlossary,
  layers: enLayers,
  checkout: enCheckout,
  refunds: enRefunds,
  lab: enLab,
  timeline: enTimeline,
  scenarios: enScenarios,
  problems: enProblems,
  workshop: enWorkshop,
};
export type Messages = typeof en;

export const MESSAGES: Record<Locale, Messages> = {
  en,
  'zh-CN': {
    common: zhCommon,
    home: zhHome,
    glossary: zhGlossary,
    layers: zhLayers,
    checkout: zhCheckout,
    refunds: zhRefunds,
    lab: zhLab,
    timeline: zhTimeline,
    scenarios: zhScenarios,
    problems: zhProblems,
    workshop: zhWorkshop,
  },
};

/**
 * The areas client components read (useTranslations in a 'use client' module): the only ones sent to the
 * browser. lib/i18n/client-areas.test.ts fails when a client component reads another.
 */
export const CLIENT_AREAS = ['common', 'layers', 'checkout', 'refunds', 'lab', 'timeline'] as const satisfies Array<
  keyof Messages
>;
