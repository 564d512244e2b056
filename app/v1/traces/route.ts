import { handleOtlp, OTLP_BODY } from "@/lib/server/otlp-request";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** OTLP/HTTP traces export (JSON or protobuf): the path an exporter appends to OTEL_EXPORTER_OTLP_ENDPOINT. */
export const POST = route({ access: "ingest", text: OTLP_BODY }, (call) => handleOtlp("traces", call.request, call, call.source, call.now));
