import type { NextRequest } from 'next/server';
import { missingSession, sessionCallerOf } from '@/lib/http/caller';
import { labDisabled } from '@/lib/http/lab-guard';
import { otherMethods } from '@/lib/http/methods';
import { json, withProblems } from '@/lib/http/problem';
import { refuseCrossSite } from '@/lib/http/same-origin';
import { followRoom } from '@/lib/lab/room-steering';

/** An attendee follows the room again: their own lab is dropped, and they get the global one, the room's. */
export const POST = withProblems(async (request: NextRequest): Promise<Response> => {
  const disabled = labDisabled() ?? refuseCrossSite(request);
  if (disabled) return disabled;
  const session = sessionCallerOf(request);
  if (!session) return missingSession('missingCallerFollow');
  return json(await followRoom(session), 200, { 'x-lab-scope': 'mine', 'x-lab-follows-room': 'yes' });
});

/** Any other method: 405 with Allow and a problem; OPTIONS names the methods above. */
export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
