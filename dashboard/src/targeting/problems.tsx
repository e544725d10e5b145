// The targeting editors use the design system's field problems (dashboard/src/ui/problems.tsx).
export { FieldProblems, problemsOf, ProblemsProvider, useProblems } from '../ui/problems.tsx';
