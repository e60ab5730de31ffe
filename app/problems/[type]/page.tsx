import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { isProblemType, PROBLEM_TYPES, problemTypeUri } from '@/lib/http/problem-types';

// The page a problem's `type` points to (RFC 9457: the type URI resolves to human-readable documentation).
type Props = { params: Promise<{ type: string }> };

export function generateStaticParams() {
  return Object.keys(PROBLEM_TYPES).map((type) => ({ type }));
}
export const dynamicParams = false;

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const { type } = await params;
  return { title: isProblemType(type) ? PROBLEM_TYPES[type].name : 'Problem' };
}

const RETRY: Record<string, string> = {
  no: 'No: the answer will not change.',
  'after Retry-After': 'Yes, with the same Idempotency-Key, after the delay Retry-After gives.',
  'after fixing the request': 'Only once the request is fixed (a new request, so a new key if the body changes).',
  'after reloading the page': 'From a fresh page (a new checkout token).',
};

export default async function ProblemPage({ params }: Props) {
  const { type } = await params;
  if (!isProblemType(type)) notFound();
  const info = PROBLEM_TYPES[type];
  const example = { type: problemTypeUri(type), status: info.status, ...info.example };
  return (
    <article className="problem-page">
      <p className="small muted">
        <Link href="/problems">Problem types</Link> · <code>{problemTypeUri(type)}</code>
      </p>
      <h1>{info.name}</h1>
      <p>
        HTTP <strong>{info.status}</strong>, <code>application/problem+json</code>.
      </p>
      <h2>What it means</h2>
      <p>{info.means}</p>
      <h2>What to do</h2>
      <p>{info.todo}</p>
      <p>
        <strong>Retry?</strong> {RETRY[info.retry]}
      </p>
      <h2>Example</h2>
      <pre className="code-block">
        <code>{JSON.stringify(example, null, 2)}</code>
      </pre>
    </article>
  );
}
