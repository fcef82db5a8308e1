export * from './schemas';
export * from './situations';
export * from './paths';
export * from './validate';
export { seuNumeroFor, SEU_NUMERO_MAX } from './seu-numero';
