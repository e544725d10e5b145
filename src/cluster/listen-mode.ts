/**
 * Whether `server.listen({ reusePort: true })` works here: Node 22.12 and 23.1 added the option, and on
 * Linux the kernel spreads the connections over every socket bound to the port. Elsewhere (and on older
 * Node) the workers share the primary's socket through the cluster module.
 */
export function supportsReusePort(nodeVersion: string, platform: NodeJS.Platform): boolean {
  if (platform !== 'linux') return false;
  const [major = 0, minor = 0] = nodeVersion.replace(/^v/, '').split('.').map(Number);
  if (major === 22) return minor >= 12;
  if (major === 23) return minor >= 1;
  return major > 23;
}
