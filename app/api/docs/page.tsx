import type { Metadata } from 'next';
import Link from 'next/link';
import { getLocale, getTranslations } from 'next-intl/server';
import { openApiDocument } from '@/lib/http/openapi';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations('problems'))('reference.title') };
}

type Json = Record<string, unknown>;
const METHODS = ['get', 'post', 'put', 'delete'] as const;

/**
 * The OpenAPI document, for people: every operation, its parameters, its examples and its answers. The
 * reference is generated from the document, in English (lang="en": a program's contract, one text for both
 * languages); in Chinese the heading and a note say so.
 */
export default async function ApiDocsPage() {
  const t = await getTranslations('problems');
  const locale = await getLocale();
  const document = openApiDocument() as unknown as Json & { paths: Record<string, Record<string, Json>> };
  const info = document.info as { title: string; version: string; description: string };
  return (
    <article className="api-docs">
      <h1>{t('reference.title')}</h1>
      {locale === 'en' ? null : <p>{t.rich('reference.note', { code: (chunks) => <code>{chunks}</code> })}</p>}
      <div lang="en">
        <p>
          {inline(info.description)} The same document as JSON: <a href="/api/openapi.json">/api/openapi.json</a>{' '}
          (OpenAPI 3.1); every problem type: <Link href="/problems">/problems</Link>.
        </p>
        <nav aria-label="Operations">
          <ul>
            {Object.entries(document.paths).flatMap(([path, item]) =>
              METHODS.filter((method) => item[method]).map((method) => (
                <li key={`${method} ${path}`}>
                  <a href={`#${anchor(method, path)}`}>
                    <code>
                      {method.toUpperCase()} {path}
                    </code>
                  </a>{' '}
                  {String((item[method] as Json).summary ?? '')}
                </li>
              )),
            )}
          </ul>
        </nav>
        {Object.entries(document.paths).flatMap(([path, item]) =>
          METHODS.filter((method) => item[method]).map((method) => (
            <Operation key={`${method} ${path}`} method={method} path={path} operation={item[method] as Json} />
          )),
        )}
      </div>
    </article>
  );
}

function Operation({ method, path, operation }: { method: string; path: string; operation: Json }) {
  const parameters = (operation.parameters ?? []) as Array<{
    name: string;
    in: string;
    required?: boolean;
    description?: string;
  }>;
  const body = (operation.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
  const examples = Object.entries((body?.['application/json']?.examples ?? {}) as Record<string, Json>);
  const responses = Object.entries((operation.responses ?? {}) as Record<string, Json>);
  return (
    <section className="card" id={anchor(method, path)} aria-labelledby={`${anchor(method, path)}-title`}>
      <h2 id={`${anchor(method, path)}-title`}>
        <code>
          {method.toUpperCase()} {path}
        </code>
      </h2>
      <p>
        <strong>{String(operation.summary ?? '')}</strong>
        {operation.description ? <> {inline(String(operation.description))}</> : ''}
      </p>
      {parameters.length > 0 ? (
        <table className="matrix">
          <caption>Parameters</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">In</th>
              <th scope="col">Meaning</th>
            </tr>
          </thead>
          <tbody>
            {parameters.map((parameter) => (
              <tr key={`${parameter.in} ${parameter.name}`}>
                <th scope="row">
                  <code>{parameter.name}</code>
                  {parameter.required ? ' (required)' : ''}
                </th>
                <td>{parameter.in}</td>
                <td className="small">{inline(parameter.description ?? '')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {examples.length > 0 ? <h3>Examples</h3> : null}
      {examples.map(([name, example]) => (
        <div key={name}>
          <p className="small">
            {String(example.summary ?? name)}: answered <strong>{String(example['x-status'])}</strong>
          </p>
          <pre className="code-block">
            <code>{JSON.stringify(example.value, null, 2)}</code>
          </pre>
        </div>
      ))}
      <h3>Answers</h3>
      <dl>
        {responses.map(([status, response]) => (
          <div key={status}>
            <dt>
              <strong>{status}</strong>
            </dt>
            <dd className="small">{inline(String(response.description ?? ''))}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

/**
 * A description's Markdown, the little the OpenAPI document uses: `code` spans and "[name](/problems/name)"
 * links to the problem pages. Everything else is plain text (React escapes it).
 */
function inline(text: string) {
  return text.split(/(`[^`]+`|\[[a-z-]+\]\(\/problems\/[a-z-]+\))/).map((part, index) => {
    const link = /^\[([a-z-]+)\]\((\/problems\/[a-z-]+)\)$/.exec(part);
    if (link) {
      return (
        // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one fixed text, never reordered
        <Link key={index} href={link[2] ?? '/problems'}>
          {link[1]}
        </Link>
      );
    }
    if (part.startsWith('`') && part.endsWith('`') && part.length > 2) {
      // biome-ignore lint/suspicious/noArrayIndexKey: as above
      return <code key={index}>{part.slice(1, -1)}</code>;
    }
    return part;
  });
}

const anchor = (method: string, path: string) => `${method}-${path.replace(/[^a-z0-9]+/gi, '-')}`.replace(/-+$/, '');
