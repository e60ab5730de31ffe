import Link from 'next/link';

export default function NotFound() {
  return (
    <>
      <h1>Not found</h1>
      <p>There is no such page or order.</p>
      <Link href="/">Back to the start</Link>
    </>
  );
}
