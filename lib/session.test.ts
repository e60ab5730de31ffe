import { describe, expect, it } from 'vitest';
import {
  HTTP_SESSION_COOKIE,
  newSession,
  newSessionId,
  readSessionCookie,
  SECURE_SESSION_COOKIE,
  SESSION_MAX_AGE_SECONDS,
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
  it('carry a random 22-character id, when it was signed and their 43-character signature', () => {
    const { sessionId, cookie } = newSession(SECRET);
    expect(sessionId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(cookie).toMatch(/^[A-Za-z0-9_-]{22}\.[0-9a-z]{1,8}\.[A-Za-z0-9_-]{43}$/);
    expect(cookie.startsWith(`${sessionId}.`)).toBe(true);
    expect(newSessionId()).not.toBe(newSessionId());
  });

  it('prove the id the server signed, and only with the server’s secret', () => {
    const id = newSessionId();
    const cookie = signSessionId(id, SECRET);
    expect(verifySessionCookie(cookie, SECRET)).toBe(id);
    expect(verifySessionCookie(cookie, OTHER)).toBeUndefined();
    expect(signSessionId(id, SECRET, 1_800_000_000)).toBe(signSessionId(id, SECRET, 1_800_000_000)); // deterministic
  });

  it('expire on the server a week after they were signed, whatever the browser keeps (issue 28, finding 8)', () => {
    const id = newSessionId();
    const signedAt = 1_800_000_000;
    const cookie = signSessionId(id, SECRET, signedAt);
    expect(readSessionCookie(cookie, SECRET, signedAt + SESSION_MAX_AGE_SECONDS)).toEqual({
      sessionId: id,
      issuedAt: signedAt,
    });
    expect(readSessionCookie(cookie, SECRET, signedAt + SESSION_MAX_AGE_SECONDS + 1)).toBeUndefined();
    expect(readSessionCookie(cookie, SECRET, signedAt - 3_600)).toBeUndefined(); // signed in the future
    // The time is signed: a cookie made younger is no session.
    const [, issued = '', signature = ''] = cookie.split('.');
    const younger = (signedAt + 3 * 86_400).toString(36);
    expect(issued).not.toBe(younger);
    expect(readSessionCookie(`${id}.${younger}.${signature}`, SECRET, signedAt + 8 * 86_400)).toBeUndefined();
    expect(readSessionCookie(`${id}.0${issued}.${signature}`, SECRET, signedAt)).toBeUndefined(); // respelt
  });

  it('prove nothing when chosen by the client, forged, truncated or padded', () => {
    const id = newSessionId();
    const cookie = signSessionId(id, SECRET);
    const [, issued = '', rest = ''] = cookie.split('.');
    const signature = `${issued}.${rest}`; // what follows the id
    const flip = (text: string, at: number) =>
      `${text.slice(0, at)}${text[at] === 'A' ? 'B' : 'A'}${text.slice(at + 1)}`;
    for (const value of [
      undefined,
      null,
      '',
      id, // the old unsigned format, or an id the attacker chose
      'ATTACKERCHOSENxxxxxxxx',
      `${id}.`,
      `${id}.${signature.slice(0, -1)}`,
      `${id}.${signature}A`,
      `${id}.${signature}=`,
      ` ${cookie}`,
      `${cookie} `,
      `${cookie}.x`,
      `${flip(id, 0)}.${signature}`, // another id under this id's signature
      `${id}.${flip(signature, 0)}`,
      `${id}.${signature.slice(0, -1)}${otherSpelling(signature.at(-1) ?? 'A')}`, // the same 32 bytes, respelt
      `${id}.${signSessionId(id, OTHER).split('.').slice(1).join('.')}`,
      `${id}.${issued}.${'A'.repeat(43)}`,
      `${id}.${rest}`, // the old format: no time
      `${id}.${issued}`,
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
    expect(sessionScope(sessionId)).not.toContain(cookie.split('.')[2]);
  });
});
