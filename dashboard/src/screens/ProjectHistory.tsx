import { ErrorMessage, Loading } from '../ui/index.ts';
import { History } from './History.tsx';
import { ProjectHeader, useProject } from './Projects.tsx';

/** Every recorded change of a project: flags, environments, API keys, code references. */
export function ProjectHistoryScreen({ params }: { params: { key: string } }) {
  const project = useProject(params.key);
  if (project.isPending) return <Loading what="the project" />;
  if (project.error) return <ErrorMessage error={project.error} />;
  return (
    <>
      <ProjectHeader project={project.data} current="history" />
      <History
        query={`project=${encodeURIComponent(params.key)}`}
        names={{ environments: new Map(project.data.environments.map((e) => [e.key, e.name])), projects: new Map([[project.data.key, project.data.name]]) }}
        label={`History of ${project.data.name}`}
      />
    </>
  );
}
