import { describe, expect, it } from 'vitest';
import {
  HTTP_SESSION_COOKIE,
  newSession,
  newSessionId,
  SECURE_SESSION_COOKIE,
  sessionCookieName,
  sessionScope,
  signSessionId,
  verifySessionCookie,
} from './session.ts';

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** The last of 43 base64url characters carries 4 bits of the 32 bytes and 2 unused ones: flip an unused one. */
const otherSpelling = (last: string) => BASE64URL[BASE64URL.indexOf(last) ^ 1] ?? 'A';

const SECRET = 'a-secret-of-at-least-32-characters-0001';
const OTHER = 'another-secret-of-at-least-32-chars-0002';

describe('session cookies', () => {
  it('carry a random 22-character id and its 43-character signature', () => {
    const { sessionId, cookie } = newSession(SECRET);
    expect(sessionId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(cookie).toMatch(/^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    expect(cookie.startsWith(`${sessionId}.`)).toBe(true);
    expect(newSessionId()).not.toBe(newSessionId());
  });

  it('prove the id the server signed, and only with the server’s secret', () => {
    const id = newSessionId();
    const cookie = signSessionId(id, SECRET);
    expect(verifySessionCookie(cookie, SECRET)).toBe(id);
    expect(verifySessionCookie(cookie, OTHER)).toBeUndefined();
    expect(signSessionId(id, SECRET)).toBe(cookie); // deterministic: the same id, the same cookie
  });

  it('prove nothing when chosen by the client, forged, truncated or padded', () => {
    const id = newSessionId();
    const cookie = signSessionId(id, SECRET);
    const [, signature = ''] = cookie.split('.');
    const flip = (text: string, at: number) =>
      `${text.slice(0, at)}${text[at] === 'A' ? 'B' : 'A'}${text.slice(at + 1)}`;
    for (const value of [
      undefined,
      null,
      '',
      id, // the old unsigned format, or an id the attacker chose
      'ATTACKERCHOSENxxxxxxxx',
      `${id}.`,
      `${id}.${signature.slice(0, 42)}`,
      `${id}.${signature}A`,
      `${id}.${signature}=`,
      ` ${cookie}`,
      `${cookie} `,
      `${cookie}.x`,
      `${flip(id, 0)}.${signature}`, // another id under this id's signature
      `${id}.${flip(signature, 0)}`,
      `${id}.${signature.slice(0, 42)}${otherSpelling(signature.at(-1) ?? 'A')}`, // the same 32 bytes, respelt
      `${id}.${signSessionId(id, OTHER).split('.')[1]}`,
      `${id}.${'A'.repeat(43)}`,
      `${id}|${signature}`,
      `${id.slice(0, 21)}.${signature}`,
    ]) {
      expect(verifySessionCookie(value, SECRET), String(value)).toBeUndefined();
    }
  });

  it('go by __Host-sid over https (Secure, host-only) and sid over plain http', () => {
    expect(sessionCookieName(true)).toBe(SECURE_SESSION_COOKIE);
    expect(SECURE_SESSION_COOKIE).toBe('__Host-sid');
    expect(sessionCookieName(false)).toBe(HTTP_SESSION_COOKIE);
    expect(HTTP_SESSION_COOKIE).toBe('sid');
  });

  it('scope a caller by the id alone, never by the signature', () => {
    const { sessionId, cookie } = newSession(SECRET);
    expect(sessionScope(sessionId)).toBe(`s.${sessionId}`);
    expect(sessionScope(sessionId)).not.toContain(cookie.split('.')[1]);
  });
});
