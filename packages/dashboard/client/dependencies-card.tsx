import { href } from "./router.ts";
import type { Job } from "./types.ts";
import { StateBadge } from "./ui.tsx";

/** A job link as the lists show it: the id's first characters, the whole id for readers. */
function JobLink(props: { lane: string; id: string }) {
  return (
    <a
      href={href({ view: "job", lane: props.lane, id: props.id })}
      aria-label={`Job ${props.id}`}
      title={props.id}
    >
      <code>{props.id.slice(0, 8)}</code>
    </a>
  );
}

/**
 * A job's place in a flow (capability flows): the jobs it waits (or waited) for, each
 * with what its failure does and how it ended, and the jobs waiting for it. Nothing for
 * a job in no flow.
 */
export function DependenciesCard(props: { job: Job }) {
  const { dependencies = [], dependents = [] } = props.job;
  if (dependencies.length === 0 && dependents.length === 0) return null;
  return (
    <section class="card" aria-labelledby="dependencies-title">
      <h2 id="dependencies-title">Dependencies</h2>
      {dependencies.length > 0 ? (
        <table class="table compact" aria-label="Waits for">
          <thead>
            <tr>
              <th scope="col">waits for</th>
              <th scope="col">task</th>
              <th scope="col">lane</th>
              <th scope="col">if it fails</th>
              <th scope="col">ended</th>
            </tr>
          </thead>
          <tbody>
            {dependencies.map((d) => (
              <tr key={`${d.lane}\n${d.id}`}>
                <td>
                  <JobLink lane={d.lane} id={d.id} />
                </td>
                <td>{d.task ?? "–"}</td>
                <td>{d.lane}</td>
                <td>{d.onFailure}</td>
                <td>
                  {d.state === undefined ? (
                    <span class="muted">not yet</span>
                  ) : (
                    <StateBadge state={d.state} />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {dependents.length > 0 ? (
        <p class="small">
          Waited for by{" "}
          {dependents.map((d, i) => (
            <span key={`${d.lane}\n${d.jobId}`}>
              {i > 0 ? ", " : ""}
              <JobLink lane={d.lane} id={d.jobId} /> in {d.lane}
            </span>
          ))}
          .
        </p>
      ) : null}
    </section>
  );
}
