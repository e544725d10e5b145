// The dashboard's design system (dashboard/README.md): tokens and themes in tokens.css, components here.
export { Button, Checkbox, CopyButton, Field, rules, Select, Switch, TextArea, type ButtonVariant } from './controls.tsx';
export { Badge, Breadcrumbs, type Crumb, EmptyState, ErrorMessage, KeyHint, Loading, NavTabs, Section, Table, Tabs } from './layout.tsx';
export { ConfirmDelete, ConfirmDialog, Dialog } from './dialog.tsx';
export { dismiss, toast, Toaster } from './toast.tsx';
export { applyTheme, storedTheme, ThemeSwitch } from './theme.tsx';
export { DateText, formatDate, formatFullDate, plural } from './format.tsx';
export { errorText, fieldLabel, humanProblems, humanReason } from './errors.ts';
export { FieldProblems, GroupProblems, problemsOf, ProblemsProvider, useProblems } from './problems.tsx';
