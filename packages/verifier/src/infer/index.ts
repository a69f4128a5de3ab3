export { inferAnnotations, heldText, type Inference, type InferredAnnotation, type InferredGuard, type InferOptions } from './infer.js';
export { siteKey, type WriteSite } from './facts.js';
