// A media type object with a schema must carry an example (media `example`/`examples`
// or an `example` on its schema).
export default function mediaExample(media) {
  if (!media || typeof media !== 'object' || !media.schema) return [];
  const examples = media.examples && Object.keys(media.examples).length > 0;
  return media.example !== undefined || examples || media.schema.example !== undefined
    ? []
    : [{ message: 'Media type has a schema but no example.' }];
}
