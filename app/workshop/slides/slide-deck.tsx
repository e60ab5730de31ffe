'use client';
import { type ReactNode, useCallback, useEffect, useState } from 'react';

export type Slide = { title: string; lines: string[] };

type Props = {
  slides: Slide[];
  /** In the reader's language (the server's messages): each slide's "Slide n of count", the buttons, the keys. */
  words: { slideOf: string[]; next: string; previous: string; help: ReactNode };
};

/**
 * The opening slides: one on the screen, the keyboard moves (→, Space, PageDown: next; ←, PageUp:
 * back; Home, End), the address keeps its number (#3) so a reload stays put. Printed, every slide is a page.
 */
export function SlideDeck({ slides, words }: Props) {
  const [index, setIndex] = useState(0);
  const go = useCallback(
    (to: number) => {
      const next = Math.min(Math.max(to, 0), slides.length - 1);
      setIndex(next);
      window.history.replaceState(null, '', `#${next + 1}`);
    },
    [slides.length],
  );
  useEffect(() => {
    const fromHash = Number.parseInt(window.location.hash.slice(1), 10);
    if (Number.isInteger(fromHash)) setIndex(Math.min(Math.max(fromHash - 1, 0), slides.length - 1));
  }, [slides.length]);
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.altKey || event.ctrlKey || event.metaKey) return;
      const moves: Record<string, number> = { ArrowRight: 1, ' ': 1, PageDown: 1, ArrowLeft: -1, PageUp: -1 };
      if (event.key in moves) go(index + (moves[event.key] ?? 0));
      else if (event.key === 'Home') go(0);
      else if (event.key === 'End') go(slides.length - 1);
      else return;
      event.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [go, index, slides.length]);
  return (
    <div className="slide-deck">
      {slides.map((slide, n) => (
        <section
          key={slide.title}
          className="slide"
          aria-roledescription="slide"
          aria-label={words.slideOf[n]}
          hidden={n !== index}
          data-slide={n + 1}
        >
          <h1>{slide.title}</h1>
          {slide.lines.map((line) => (
            <p key={line}>{line}</p>
          ))}
        </section>
      ))}
      <p className="slide-controls small muted">
        <button type="button" className="button" onClick={() => go(index - 1)} disabled={index === 0}>
          {words.previous}
        </button>{' '}
        <span aria-live="polite">{words.slideOf[index]}</span>{' '}
        <button type="button" className="button" onClick={() => go(index + 1)} disabled={index === slides.length - 1}>
          {words.next}
        </button>{' '}
        {words.help}
      </p>
    </div>
  );
}
