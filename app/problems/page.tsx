import type { Metadata } from 'next';
import Link from 'next/link';
import { PROBLEM_TYPES, type ProblemType, problemTypeUri } from '@/lib/http/problem-types';

export const metadata: Metadata = { title: 'Problem types' };

/** Every problem `type` the API answers with (RFC 9457), each linked to its page. */
export default function ProblemsPage() {
  const types = Object.keys(PROBLEM_TYPES) as ProblemType[];
  return (
    <>
      <h1>Problem types</h1>
      <p>
        Every error of the API is an RFC 9457 problem (<code>application/problem+json</code>). Its <code>type</code> is
        the address of a page below, also sent as <code>Link: &lt;…&gt;; rel="describedby"</code>. Programs should read{' '}
        <code>type</code> and <code>status</code>; <code>title</code> and <code>detail</code> are for people. The whole
        API is described in <Link href="/api/docs">the API reference</Link>.
      </p>
      <table className="matrix">
        <caption className="visually-hidden">Problem types, their status and meaning</caption>
        <thead>
          <tr>
            <th scope="col">Type</th>
            <th scope="col">Status</th>
            <th scope="col">Means</th>
          </tr>
        </thead>
        <tbody>
          {types.map((type) => (
            <tr key={type}>
              <th scope="row">
                <Link href={problemTypeUri(type)}>{PROBLEM_TYPES[type].name}</Link>
                <span className="small muted block">
                  <code>{type}</code>
                </span>
              </th>
              <td>{PROBLEM_TYPES[type].status}</td>
              <td className="small">{PROBLEM_TYPES[type].means}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
