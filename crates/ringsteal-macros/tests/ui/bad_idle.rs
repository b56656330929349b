#[ringsteal::test(idle = "sleep")]
async fn unknown_strategy() {}

#[ringsteal::test(idle = "spin(fast)")]
async fn budget_without_a_unit() {}

#[ringsteal::test(idle = "spin(0us)")]
async fn zero_budget() {}

#[ringsteal::test(idle = park)]
async fn not_a_string() {}

fn main() {}
