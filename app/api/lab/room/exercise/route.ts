import type { NextRequest } from 'next/server';
import { z } from 'zod';
import { readJsonBody } from '@/lib/http/body';
import { labDisabled } from '@/lib/http/lab-guard';
import { otherMethods } from '@/lib/http/methods';
import { presenterOnly } from '@/lib/http/presenter';
import { isPresenter } from '@/lib/http/presenter-session';
import { json, withProblems } from '@/lib/http/problem';
import { refuseCrossSite } from '@/lib/http/same-origin';
import { EXERCISES, findExercise } from '@/lib/lab/exercises';
import { roomExercise, setUpForEveryone } from '@/lib/lab/room-steering';

const BodySchema = z.strictObject({
  exercise: z.enum(EXERCISES.map((exercise) => exercise.id) as [string, ...string[]]),
});

/** The exercise the presenter set up for everyone (null: none since the room's last reset). */
export const GET = withProblems(async (): Promise<Response> => {
  const disabled = labDisabled();
  if (disabled) return disabled;
  return json({ exercise: (await roomExercise()) ?? null });
});

/**
 * The presenter's "Set up exercise N for everyone": the exercise's preset becomes the global lab, which every
 * attendee without a lab of their own follows at once; the others are told, and may follow (POST /api/lab/follow).
 */
export const POST = withProblems(async (request: NextRequest): Promise<Response> => {
  const disabled = labDisabled() ?? refuseCrossSite(request);
  if (disabled) return disabled;
  if (!(await isPresenter(request))) return presenterOnly('steerRoom');
  const body = await readJsonBody(request, BodySchema);
  if (!body.ok) return body.response;
  const exercise = findExercise(body.value.exercise);
  if (!exercise) return presenterOnly('steerRoom'); // unreachable: the schema lists the exercises
  return json({ exercise: await setUpForEveryone(exercise) });
});

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET', 'POST');
