'use client';

// Unexpected faults end here (expected outcomes are returned as values). No stack trace is shown.
export default function ErrorPage({ reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <>
      <h1>Something went wrong</h1>
      <p>
        The server could not finish this request. If you were paying, you were not charged twice: check the order
        status.
      </p>
      <button type="button" className="button" onClick={reset}>
        Try again
      </button>
    </>
  );
}
