#[ringsteal::test]
async fn bounded()
where
    (): Sized,
{
}

fn main() {}
