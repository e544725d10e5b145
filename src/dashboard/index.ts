export { DASHBOARD_CSP, registerDashboard } from './dashboard.routes.ts';
