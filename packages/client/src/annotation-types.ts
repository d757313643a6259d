import type { AnnotationsComponents } from './generated/roles.js';

type Schemas = AnnotationsComponents['schemas'];

// Friendly names for the generated annotation schemas.
export type Annotation = Schemas['Annotation'];
export type AnnotationCreate = Schemas['AnnotationCreate'];
export type AnnotationUpdate = Schemas['AnnotationUpdate'];
export type AnnotationCategory = Schemas['AnnotationCategory'];
/** A category as the rename and the bulk assignment answer it: the name under `category`. */
export type RenamedAnnotationCategory = Schemas['RenamedAnnotationCategory'];
export type AssignedAnnotation = Schemas['AssignedAnnotation'];
