// Example records for the OpenAPI document: what the API answers from the shipped sample (data/) to each example
// request, long texts cut after their start with "…" (test/openapi.test.ts compares them with the answers). The
// listing endpoints' examples are in ./listing-examples.ts.
import { LISTING_EXAMPLES } from './listing-examples.ts';

const OWNER = {
  id: 'own_00011',
  slug: 'visser-makelaars-00011',
  name: 'Visser Makelaars',
  type: 'agency',
  website_url: 'https://www.vissermakelaars.example.nl',
  image_url: 'https://images.example.nl/owners/own_00011.png',
  phone_numbers: null,
  emails: null,
  areas_served: ['Utrecht', 'Tilburg'],
  certifications: ['Vastgoedpro'],
  description_short: 'Rental agency active in Utrecht.',
  updated_at: '2026-09-20T00:18:40Z',
};

const INTERNET_PROVIDER = {
  id: 'inet_001',
  slug: 'kpn',
  name: 'KPN',
  website_url: 'https://www.kpn.com',
  postcode_check_url: 'https://www.kpn.com',
  logo_url: 'https://images.example.nl/logos/kpn.svg',
  customer_service_url: 'https://www.kpn.com',
  support_languages: ['nl', 'en'],
  description: 'KPN offers home internet over fiber and DSL in the Netherlands.',
  last_verified_at: '2026-09-21T05:18:40Z',
  updated_at: '2026-06-17T17:45:35Z',
};

const PLATFORM = {
  id: 'plat_001',
  slug: 'funda',
  name: 'Funda',
  url: 'https://www.funda.nl',
  logo_url: null,
  type: 'listing_site',
  category: 'rent_and_sale',
  registration_required: false,
  registration_fee_amount: null,
  subscription_fee_from: null,
  fee_currency: null,
  headline: 'Rental listings from landlords and agencies',
  features: ['E-mail alerts for new listings', 'Map search', 'Mobile app'],
  last_verified_at: '2026-08-07T23:16:29Z',
  updated_at: '2026-06-14T05:57:38Z',
};

const ARTICLE_SUMMARY = {
  id: 'art_0001',
  slug: 'renting-in-amsterdam',
  title: 'Renting in Amsterdam: neighbourhoods and prices',
  description:
    'What to expect when you look for a rental home in Amsterdam, from popular neighbourhoods to typical rents.',
  category: 'city_guide',
  location_id: 'loc_0013',
  created_at: '2026-06-23T13:07:10Z',
  updated_at: '2026-06-23T13:07:10Z',
};

const LOCATION = {
  id: 'loc_0013',
  slug: 'amsterdam',
  type: 'city',
  name: 'Amsterdam',
  parent_id: 'loc_0008',
  latitude: 52.3676,
  longitude: 4.9041,
  postcode_prefixes: ['10', '110'],
};

export const EXAMPLES = {
  ...LISTING_EXAMPLES,
  ownerSummary: OWNER,
  ownerDetail: {
    ...OWNER,
    description:
      '**Visser Makelaars**: Rental agency active in Utrecht.\n\n- Viewings by appointment\n- We respond to enquiries within two working days\n- Rent is paid monthly in advance',
  },
  internetProviderSummary: INTERNET_PROVIDER,
  internetProviderDetail: {
    ...INTERNET_PROVIDER,
    support_details:
      'Support by phone, chat and e-mail. Check availability at your address with your postcode and house number before ordering.',
    strengths: ['Nationwide fiber network', 'Symmetrical upload speeds', 'TV and mobile bundles'],
    considerations: ['Fiber is not available at every address', 'Higher regular price after the introductory period'],
  },
  internetPlan: {
    id: 'plan_0001',
    provider_id: 'inet_001',
    name: 'KPN Glasvezel 100 Mbit/s',
    connection_type: 'fiber',
    download_mbps: 100,
    upload_mbps: 100,
    minimum_contract_months: 24,
    regular_monthly_price_cents: 4495,
    intro_monthly_price_cents: 2495,
    intro_duration_months: 12,
    activation_fee_cents: 0,
    installation_fee_cents: 0,
    currency: 'EUR',
    official_url: 'https://www.kpn.com',
    postcode_check_url: 'https://www.kpn.com',
    availability_status: 'postcode_check',
    description: null,
    last_verified_at: '2026-10-15T21:14:18Z',
    updated_at: '2026-04-20T02:36:58Z',
  },
  insuranceProduct: {
    id: 'insprod_0001',
    slug: 'centraal-beheer-inboedelverzekering',
    provider_id: 'insurer_001',
    name: 'Centraal Beheer Inboedelverzekering',
    official_name: 'Inboedelverzekering',
    insurance_type: 'contents',
    product_kind: 'standalone',
    availability: 'available',
    official_url: 'https://www.centraalbeheer.nl',
    quote_url: null,
    headline: 'Covers your belongings against fire, theft and water damage',
    summary:
      "Contents insurance (inboedelverzekering) for tenants: furniture, electronics and clothing are covered; the building itself is the landlord's responsibility.",
    last_verified_at: null,
    updated_at: '2026-03-30T09:49:11Z',
  },
  insuranceProvider: {
    id: 'insurer_001',
    slug: 'centraal-beheer',
    name: 'Centraal Beheer',
    website_url: 'https://www.centraalbeheer.nl',
    logo_url: 'https://images.example.nl/logos/centraal-beheer.svg',
    customer_service_url: 'https://www.centraalbeheer.nl',
    complaints_url: null,
    last_verified_at: '2026-10-16T04:08:26Z',
    updated_at: '2026-01-05T18:03:16Z',
  },
  platformSummary: PLATFORM,
  platformDetail: {
    ...PLATFORM,
    attributes: { languages: ['nl', 'en'], mobile_app: true },
    description: 'Funda is a listing site where landlords and agencies advertise homes.',
    pricing_details: 'Searching and responding is free for tenants.',
    content:
      '## How it works\n\nSearch by city, price and size, save a search and respond to listings directly. Landlords decide who gets a viewing.\n\n## Tips\n\n…',
  },
  articleSummary: ARTICLE_SUMMARY,
  articleDetail: {
    id: ARTICLE_SUMMARY.id,
    slug: ARTICLE_SUMMARY.slug,
    title: ARTICLE_SUMMARY.title,
    description: ARTICLE_SUMMARY.description,
    content:
      '## Neighbourhoods\n\nPopular neighbourhoods in Amsterdam include Centrum, Jordaan, De Pijp and Oud-West.\n\n## Rents\n\n…',
    category: ARTICLE_SUMMARY.category,
    location_id: ARTICLE_SUMMARY.location_id,
    created_at: ARTICLE_SUMMARY.created_at,
    updated_at: ARTICLE_SUMMARY.updated_at,
  },
  glossaryEntry: {
    id: 'term_0001',
    slug: 'huurtoeslag',
    term: 'huurtoeslag',
    definition:
      'Rent benefit: a monthly government contribution towards the rent for tenants with a low income. The amount depends on income, assets, rent and household; you apply at the Dienst Toeslagen.',
    updated_at: '2025-08-06T00:00:00Z',
  },
  location: LOCATION,
  locationDetail: {
    ...LOCATION,
    parents: [{ id: 'loc_0008', slug: 'noord-holland-province', type: 'province', name: 'North Holland' }],
  },
  /** Every metric, in the order served: the first is the example of the observations path. */
  metrics: [
    {
      id: 'average_rent',
      name: 'Average rent',
      description:
        'Mean asking rent per month of the rental listings first seen in the period; more sensitive to outliers than the median.',
      unit: 'EUR',
      min_sample_size: 10,
    },
    {
      id: 'median_rent',
      name: 'Median rent',
      description: 'Median asking rent per month of the rental listings first seen in the period.',
      unit: 'EUR',
      min_sample_size: 5,
    },
    {
      id: 'median_rent_per_m2',
      name: 'Median rent per m²',
      description:
        'Median asking rent per square metre per month of the rental listings first seen in the period (listings without a size are left out).',
      unit: 'EUR/m2',
      min_sample_size: 5,
    },
    {
      id: 'new_listings',
      name: 'New listings',
      description: 'Number of rental listings first seen in the period.',
      unit: 'listings',
      min_sample_size: 1,
    },
  ],
  /** The whole series of the example request (average_rent, loc_0013, 2026-01-01 to 2026-06-30): no month is left out. */
  observations: [
    { date: '2026-01-01', value: 1917.13, sample_size: 15 },
    { date: '2026-02-01', value: 1876.5, sample_size: 12 },
    { date: '2026-03-01', value: 2233.25, sample_size: 16 },
    { date: '2026-04-01', value: 2126.45, sample_size: 11 },
    { date: '2026-05-01', value: 1927.61, sample_size: 18 },
    { date: '2026-06-01', value: 2201.9, sample_size: 10 },
  ],
};
