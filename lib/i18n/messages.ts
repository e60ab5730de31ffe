// Every message of the demo, per language, in one file per area (messages/<locale>/<area>.json): the area is
// the namespace a component asks for (`useTranslations('checkout')`). English is the reference: its keys are
// the ones every language must have (lib/i18n/messages.test.ts fails on one missing either way).
import enCommon from '../../messages/en/common.json';
import enGlossary from '../../messages/en/glossary.json';
import enHome from '../../messages/en/home.json';
import enLab from '../../messages/en/lab.json';
import enLayers from '../../messages/en/layers.json';
import enTimeline from '../../messages/en/timeline.json';
import zhCommon from '../../messages/zh-CN/common.json';
import zhGlossary from '../../messages/zh-CN/glossary.json';
import zhHome from '../../messages/zh-CN/home.json';
import zhLab from '../../messages/zh-CN/lab.json';
import zhLayers from '../../messages/zh-CN/layers.json';
import zhTimeline from '../../messages/zh-CN/timeline.json';
import type { Locale } from './locales.ts';

const en = {
  common: enCommon,
  home: enHome,
  glossary: enGlossary,
  layers: enLayers,
  lab: enLab,
  timeline: enTimeline,
};
export type Messages = typeof en;

export const MESSAGES: Record<Locale, Messages> = {
  en,
  'zh-CN': {
    common: zhCommon,
    home: zhHome,
    glossary: zhGlossary,
    layers: zhLayers,
    lab: zhLab,
    timeline: zhTimeline,
  },
};
