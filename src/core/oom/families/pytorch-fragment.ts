/**
 * A piece of PyTorch's caching-allocator message without its head: the tail a user pasted ("… 4.74 GiB
 * reserved in total by PyTorch"), the middle of a long line, or the hint sentence alone. Every field the piece
 * prints is read exactly, from the start of the text (a piece has no head: any of its fields finds it); the
 * event is marked partial. The scanner looks for a piece only before the first whole message of a block, so a
 * message's own fields are never taken for a second, cut one.
 */
import { blankFields, clip, exceptionBefore, FieldCursor, type Recognized, type Recognizer } from './base.js';
import { findPiece, readPieces } from './pytorch-pieces.js';

const HINT_VAR = /(PYTORCH_[A-Z]{0,6}_?ALLOC_CONF)=expandable_segments/gi;

export const pytorchFragment: Recognizer = {
  findHead: findPiece,
  read(text, start, limit): Recognized {
    const fields = blankFields('pytorch-cuda');
    fields.partial = true;
    fields.exceptionClass = exceptionBefore(text, start);
    const cur = new FieldCursor(text, start, limit, start);
    const read = readPieces(text, start, limit, fields, cur);
    const hint = cur.take(HINT_VAR);
    if (hint) {
      fields.hintVariable = (hint[1] as string).toUpperCase();
      if (fields.hintVariable.includes('HIP')) fields.family = 'pytorch-hip';
    }
    const hintEnd = /(?:environment-variables|pytorch-cuda-alloc-conf|PYTORCH_CUDA_ALLOC_CONF|PYTORCH_HIP_ALLOC_CONF)\)?/gi;
    hintEnd.lastIndex = cur.end;
    const tail = hintEnd.exec(text);
    const end = tail && tail.index < limit && tail.index - cur.end < 300 ? tail.index + tail[0].length : Math.max(cur.end, start + 1);
    fields.message = clip(text, start, end);
    return { fields, start, end, fieldCount: read + cur.count, wants: hint ? 'none' : 'hint' };
  },
};
