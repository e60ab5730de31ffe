import { describe, expect, it } from 'vitest';
import { hostAllowedBy, parseHost } from './hosts.ts';

const LOOPBACK_ONLY = { host: '127.0.0.1', allowedHosts: [] };

describe('parseHost', () => {
  it('reads a name, an IPv4 or IPv6 address, with or without a port', () => {
    expect(parseHost('LocalHost:3000')).toEqual({ name: 'localhost', port: '3000' });
    expect(parseHost('example.org')).toEqual({ name: 'example.org' });
    expect(parseHost('example.org.')).toEqual({ name: 'example.org' });
    expect(parseHost('[::1]:8080')).toEqual({ name: '[::1]', port: '8080' });
    expect(parseHost('[FE80::1]')).toEqual({ name: '[fe80::1]' });
  });

  it('refuses what is not a host', () => {
    for (const value of [
      '',
      ':3000',
      'a b',
      'a:b',
      'a:',
      'a:123456',
      '::1',
      '[::1',
      'user@host',
      'a/b',
      'é.example',
      'a..b',
    ]) {
      expect(parseHost(value), value).toBeUndefined();
    }
  });
});

describe('hostAllowedBy', () => {
  it('answers loopback by any name and any port', () => {
    for (const host of ['localhost', 'localhost:3000', '127.0.0.1:3100', '[::1]:3000', 'LOCALHOST:1']) {
      expect(hostAllowedBy(host, LOOPBACK_ONLY), host).toBe(true);
    }
  });

  it('refuses any other name: a rebound DNS name, another address, nothing at all', () => {
    for (const host of [
      'attacker.example',
      'attacker.example:3000',
      'localhost.attacker.example',
      '127.0.0.1.nip.io',
      '192.168.1.20:3000',
      '0.0.0.0:3000',
      '',
      'localhost:abc',
      null,
      undefined,
    ]) {
      expect(hostAllowedBy(host, LOOPBACK_ONLY), String(host)).toBe(false);
    }
  });

  it('answers the address it listens on (HOST) on any port, unless HOST is a wildcard', () => {
    expect(hostAllowedBy('192.168.1.20:3000', { host: '192.168.1.20', allowedHosts: [] })).toBe(true);
    expect(hostAllowedBy('192.168.1.20', { host: '192.168.1.20', allowedHosts: [] })).toBe(true);
    expect(hostAllowedBy('[fe80::1]:3000', { host: 'fe80::1', allowedHosts: [] })).toBe(true);
    for (const wildcard of ['0.0.0.0', '::', '[::]']) {
      expect(hostAllowedBy('0.0.0.0:3000', { host: wildcard, allowedHosts: [] }), wildcard).toBe(false);
      expect(hostAllowedBy('[::]:3000', { host: wildcard, allowedHosts: [] }), wildcard).toBe(false);
      expect(hostAllowedBy('evil.example', { host: wildcard, allowedHosts: [] }), wildcard).toBe(false);
    }
  });

  it('listening on every interface, answers this machine’s own addresses (what attendees type), and only those', () => {
    const policy = { host: '0.0.0.0', allowedHosts: [], ownAddresses: ['192.168.1.20', '[fe80::1]'] };
    expect(hostAllowedBy('192.168.1.20:3000', policy)).toBe(true);
    expect(hostAllowedBy('[fe80::1]:3000', policy)).toBe(true);
    expect(hostAllowedBy('192.168.1.21:3000', policy)).toBe(false);
    expect(hostAllowedBy('evil.example:3000', policy)).toBe(false);
    // Bound to one address, the others are not served.
    expect(hostAllowedBy('192.168.1.20:3000', { ...policy, host: '10.0.0.5' })).toBe(false);
  });

  it('answers ALLOWED_HOSTS: a name on any port, name:port on that port only', () => {
    const policy = { host: '0.0.0.0', allowedHosts: ['workshop.example.org', '192.168.1.20:3000', '[fe80::2]:80'] };
    expect(hostAllowedBy('workshop.example.org', policy)).toBe(true);
    expect(hostAllowedBy('Workshop.Example.Org:8443', policy)).toBe(true);
    expect(hostAllowedBy('192.168.1.20:3000', policy)).toBe(true);
    expect(hostAllowedBy('192.168.1.20:3001', policy)).toBe(false);
    expect(hostAllowedBy('192.168.1.20', policy)).toBe(false);
    expect(hostAllowedBy('[fe80::2]:80', policy)).toBe(true);
    expect(hostAllowedBy('other.example.org', policy)).toBe(false);
    expect(hostAllowedBy('sub.workshop.example.org', policy)).toBe(false);
  });
});
