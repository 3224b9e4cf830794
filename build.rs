//! Compiles the agents' gRPC API (proto/) when the `agents` feature is on.

fn main() {
    println!("cargo:rerun-if-changed=proto/mcbench/agent/v1/agent.proto");
    #[cfg(feature = "agents")]
    tonic_prost_build::compile_protos("proto/mcbench/agent/v1/agent.proto").expect(
        "protoc compiles proto/mcbench/agent/v1/agent.proto (apt-get install protobuf-compiler)",
    );
}
