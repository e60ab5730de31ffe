import type { Metadata } from 'next';
import Link from 'next/link';

export const metadata: Metadata = { title: 'Too many requests' };

/** Where "Start a checkout" and Pay lead a browser that asked for too many in a minute. */
export default async function LimitedPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { seconds } = await searchParams;
  const wait = typeof seconds === 'string' && /^\d{1,4}$/.test(seconds) ? Number(seconds) : 60;
  return (
    <>
      <h1>Too many requests</h1>
      <p role="alert">
        This browser started more checkouts in the last minute than one visitor may. Try again in {wait} s.
      </p>
      <p>
        <Link href="/">Back to the start</Link>
      </p>
    </>
  );
}
