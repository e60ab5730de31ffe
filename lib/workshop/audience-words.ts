// What the guide says under each exercise's heading about who plays it in a room (lib/lab/exercises.ts
// `audience`), in each of its languages: the line docs/workshop.md and docs/workshop.zh-CN.md print, and the
// lab's exercise list's note. Pure and browser-safe.
import type { Audience } from '../lab/exercises.ts';

export const AUDIENCE_LINES: Record<'en' | 'zh-CN', Record<Audience, string>> = {
  en: {
    browser: '_Attendees: in your browser, with your own lab._',
    terminal: "_Attendees: in a terminal, with `curl` against the room's app (`$APP`, as `$ME`)._",
    presenter:
      '_The presenter shows this one: it needs the repository, a terminal and Chromium (or `npm run demo:cluster`)._',
  },
  'zh-CN': {
    browser: '_学员：在你的浏览器里，用你自己的实验室。_',
    terminal: '_学员：在终端里用 `curl` 连到课堂的应用（`$APP`，以 `$ME` 的身份）。_',
    presenter: '_由讲师演示：它需要代码仓库、终端和 Chromium（或 `npm run demo:cluster`）。_',
  },
};
