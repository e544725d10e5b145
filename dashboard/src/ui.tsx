// The design system lives in ./ui/ (dashboard/README.md); this file keeps the older import path working.
export * from './ui/index.ts';
