//! The stream workloads of the networking suite: one client connection per stream, talking
//! to the std echo peer (`crate::net::thread_server::echo`, the same for every runtime).
//! Every stream does the same thing on every runtime: it sends a *batch* of frames (each
//! written whole and awaited before the next), then reads the batch back frame by frame,
//! checks each echoed frame and, in the pipeline shape, runs a CPU stage on it.
//!
//! | shape | streams | one criterion iteration |
//! |---|---|---|
//! | [`Shape::EchoRtt`] | 1 | one 256-byte message sent and read back (depth 1) |
//! | [`Shape::Window`] | 8 | every stream: one batch of 32 frames of 4 KiB (1 MiB echoed in all) |
//! | [`Shape::HotspotRotation`] | 8 | every stream: 64 steps; in step `s` stream `s % 8` is hot and echoes a batch of 32 frames, the others batches of 2 |
//! | [`Shape::PipelineHotspot`] | 8 | every stream: 1,024 frames in batches of 32; frame `f` of stream `s % 8 == (f / 64) % 8` gets a heavy CPU stage (4,000 steps), every other frame a light one (150) |
//!
//! The hot-spot shapes are spargio's `net_stream_hotspot_rotation_4k` and
//! `net_pipeline_hotspot_rotation_4k_window32` (spargio's `benches/net_api.rs`): same
//! counts, same rotation, same per-stream independence. As there, no barrier keeps the
//! streams in step: each stream walks the rotation in its own time, so every stream carries
//! the same total work (8 hot and 56 light steps; 128 heavy and 896 light frames) and the
//! imbalance is in time, between whichever streams are hot at a given moment.
//!
//! A frame carries its stream and index (12-byte header) and a marker byte at its end;
//! [`check_frame`] panics on any echoed frame that is not the one expected next.

use crate::util::synthetic_work;

/// Message size of `net_echo_rtt_256b`.
pub const RTT_MESSAGE: usize = 256;
/// Frame size of the multi-stream shapes.
pub const FRAME: usize = 4096;
/// Streams of the multi-stream shapes.
pub const STREAMS: usize = 8;
/// Frames per batch (in flight at once) in the window and pipeline shapes.
pub const WINDOW: usize = 32;
/// Steps of one hot-spot rotation.
pub const HOTSPOT_STEPS: usize = 64;
/// Frames of the hot stream in a rotation step.
pub const HOTSPOT_HEAVY_FRAMES: usize = 32;
/// Frames of every other stream in a rotation step.
pub const HOTSPOT_LIGHT_FRAMES: usize = 2;
/// Frames per stream in one pipeline iteration.
pub const PIPELINE_FRAMES: usize = 1024;
/// Frames after which the pipeline's hot stream moves on.
pub const PIPELINE_ROTATE_EVERY: usize = 64;
/// CPU steps of a frame of the hot stream (`synthetic_work`, ~1.3 ns a step here).
pub const PIPELINE_HEAVY_WORK: u32 = 4000;
/// CPU steps of every other frame.
pub const PIPELINE_LIGHT_WORK: u32 = 150;

const HEADER: usize = 12;

/// Which workload a plan is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `net_echo_rtt_256b`.
    EchoRtt,
    /// `net_stream_4k_window32`.
    Window,
    /// `net_stream_hotspot_rotation_4k`.
    HotspotRotation,
    /// `net_pipeline_hotspot_rotation_4k_window32`.
    PipelineHotspot,
}

impl Shape {
    /// Client connections of the shape.
    pub fn streams(self) -> usize {
        match self {
            Shape::EchoRtt => 1,
            _ => STREAMS,
        }
    }

    /// Frame size of the shape.
    pub fn frame_len(self) -> usize {
        match self {
            Shape::EchoRtt => RTT_MESSAGE,
            _ => FRAME,
        }
    }

    /// Bytes sent (and echoed back) by all streams in one criterion iteration.
    pub fn bytes_per_iteration(self) -> u64 {
        let frames = (0..self.streams())
            .map(|s| Plan::new(self, s, 1).frames())
            .sum::<u64>();
        frames * self.frame_len() as u64
    }
}

/// What stream `stream` does in `iters` criterion iterations of a shape: its batches, in
/// order, and the CPU stage of each frame.
#[derive(Clone, Debug)]
pub struct Plan {
    shape: Shape,
    stream: usize,
    batches: Vec<usize>,
}

impl Plan {
    /// The plan of `stream` for `iters` iterations of `shape`.
    pub fn new(shape: Shape, stream: usize, iters: u64) -> Self {
        let one: Vec<usize> = match shape {
            Shape::EchoRtt => vec![1],
            Shape::Window => vec![WINDOW],
            Shape::HotspotRotation => (0..HOTSPOT_STEPS)
                .map(|step| {
                    if step % STREAMS == stream {
                        HOTSPOT_HEAVY_FRAMES
                    } else {
                        HOTSPOT_LIGHT_FRAMES
                    }
                })
                .collect(),
            Shape::PipelineHotspot => vec![WINDOW; PIPELINE_FRAMES / WINDOW],
        };
        let batches = (0..iters).flat_map(|_| one.iter().copied()).collect();
        Self {
            shape,
            stream,
            batches,
        }
    }

    /// The stream's index (written into its frames).
    pub fn stream(&self) -> usize {
        self.stream
    }

    /// Bytes per frame.
    pub fn frame_len(&self) -> usize {
        self.shape.frame_len()
    }

    /// Frames per batch, in order: each batch is written whole, then read back.
    pub fn batches(&self) -> &[usize] {
        &self.batches
    }

    /// Frames in all batches.
    pub fn frames(&self) -> u64 {
        self.batches.iter().sum::<usize>() as u64
    }

    /// CPU steps to run on echoed frame `index` (0: no CPU stage).
    pub fn work(&self, index: u64) -> u32 {
        if self.shape != Shape::PipelineHotspot {
            return 0;
        }
        let f = index as usize % PIPELINE_FRAMES;
        if (f / PIPELINE_ROTATE_EVERY) % STREAMS == self.stream {
            PIPELINE_HEAVY_WORK
        } else {
            PIPELINE_LIGHT_WORK
        }
    }

    /// Checks echoed frame `index` and runs its CPU stage; returns the stage's result (the
    /// caller sums them, so no stage can be optimised away).
    pub fn receive(&self, frame: &[u8], index: u64) -> u64 {
        check_frame(frame, self.stream, index);
        match self.work(index) {
            0 => u64::from(frame[HEADER]),
            w => synthetic_work(index ^ ((self.stream as u64) << 40), w),
        }
    }
}

/// A zeroed frame buffer of `len` bytes.
pub fn frame_buffer(len: usize) -> Vec<u8> {
    vec![0; len]
}

/// Writes the header and end marker of frame `index` of `stream` into `buf`.
pub fn fill_frame(buf: &mut [u8], stream: usize, index: u64) {
    buf[..4].copy_from_slice(&(stream as u32).to_le_bytes());
    buf[4..HEADER].copy_from_slice(&index.to_le_bytes());
    *buf.last_mut().expect("frame is not empty") = marker(stream, index);
}

/// Panics unless `buf` is frame `index` of `stream`.
pub fn check_frame(buf: &[u8], stream: usize, index: u64) {
    let ok = buf.len() > HEADER
        && buf[..4] == (stream as u32).to_le_bytes()
        && buf[4..HEADER] == index.to_le_bytes()
        && buf[buf.len() - 1] == marker(stream, index);
    assert!(ok, "stream {stream}: echoed frame {index} is wrong");
}

fn marker(stream: usize, index: u64) -> u8 {
    (index as u8) ^ (stream as u8).rotate_left(4) ^ 0x5A
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_hotspot_stream_carries_the_same_frames() {
        for s in 0..STREAMS {
            let p = Plan::new(Shape::HotspotRotation, s, 1);
            assert_eq!(p.batches().len(), HOTSPOT_STEPS);
            assert_eq!(p.frames(), 8 * 32 + 56 * 2);
        }
        assert_eq!(Shape::HotspotRotation.bytes_per_iteration(), 2944 * 4096);
    }

    #[test]
    fn pipeline_streams_are_hot_for_an_eighth_of_their_frames_each() {
        for s in 0..STREAMS {
            let p = Plan::new(Shape::PipelineHotspot, s, 2);
            assert_eq!(p.frames(), 2 * PIPELINE_FRAMES as u64);
            let heavy = (0..p.frames())
                .filter(|&i| p.work(i) == PIPELINE_HEAVY_WORK)
                .count();
            assert_eq!(heavy, 2 * 128);
        }
    }

    #[test]
    fn window_and_rtt_plans_repeat_one_batch_per_iteration() {
        assert_eq!(Plan::new(Shape::Window, 3, 5).batches(), &[WINDOW; 5]);
        assert_eq!(Plan::new(Shape::EchoRtt, 0, 3).batches(), &[1, 1, 1]);
        assert_eq!(Shape::Window.bytes_per_iteration(), 1 << 20);
        assert_eq!(Shape::EchoRtt.bytes_per_iteration(), 256);
    }

    #[test]
    fn a_frame_checks_only_as_itself() {
        let mut f = frame_buffer(FRAME);
        fill_frame(&mut f, 3, 77);
        check_frame(&f, 3, 77);
        for (s, i) in [(2, 77), (3, 76)] {
            let r = std::panic::catch_unwind(|| check_frame(&f, s, i));
            assert!(r.is_err(), "frame 3/77 passed as {s}/{i}");
        }
    }
}
